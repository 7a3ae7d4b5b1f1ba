"""Every collective on a world of one, for each dtype, blocking and not.

With one rank a reduction is the rank's own data, a gather or all-to-all a
copy; the tests check that the data really moves from send to recv.
"""

import numpy as np
import pytest

import dtrain
from conftest import DTYPES


def data(dtype, n=12):
    return (np.arange(n) % 100 + 1).astype(dtype)


def finish(result, async_op):
    """Completes an operation the way it was started and checks what came back."""
    if not async_op:
        assert result is None
        return
    assert isinstance(result, dtrain.Request)
    with result as request:
        request.wait()
        assert request.test()
    assert request.freed


@pytest.fixture(params=[False, True], ids=["blocking", "async"])
def async_op(request):
    return request.param


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["sum", "max", "min", "prod", dtrain.SUM, dtrain.ReduceOp.MAX])
def test_allreduce(comm, dtype, op, async_op):
    send, recv = data(dtype), np.zeros(12, dtype)
    finish(comm.allreduce(send, recv, op=op, async_op=async_op), async_op)
    np.testing.assert_array_equal(recv, data(dtype))
    np.testing.assert_array_equal(send, data(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_allreduce_in_place(comm, dtype, async_op):
    buf = data(dtype).reshape(3, 4)
    finish(comm.allreduce(buf, async_op=async_op), async_op)
    np.testing.assert_array_equal(buf, data(dtype).reshape(3, 4))
    # The same array named twice is in place, too.
    finish(comm.allreduce(buf, buf, async_op=async_op), async_op)
    np.testing.assert_array_equal(buf, data(dtype).reshape(3, 4))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_allreduce_avg_on_floats(comm, dtype, async_op):
    recv = np.zeros(12, dtype)
    finish(comm.allreduce(data(dtype), recv, op="avg", async_op=async_op), async_op)
    np.testing.assert_array_equal(recv, data(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce_scatter(comm, dtype, async_op):
    recv = np.zeros(12, dtype)  # size (1) x 12
    finish(comm.reduce_scatter(data(dtype), recv, op="sum", async_op=async_op), async_op)
    np.testing.assert_array_equal(recv, data(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_allgather(comm, dtype, async_op):
    recv = np.zeros((comm.size, 12), dtype)
    finish(comm.allgather(data(dtype), recv, async_op=async_op), async_op)
    np.testing.assert_array_equal(recv[0], data(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_broadcast_from_root_keeps_the_root_buffer(comm, dtype, async_op):
    buf = data(dtype)
    finish(comm.broadcast(buf, root=0, async_op=async_op), async_op)
    np.testing.assert_array_equal(buf, data(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_alltoall(comm, dtype, async_op):
    recv = np.zeros(12, dtype)
    finish(comm.alltoall(data(dtype), recv, async_op=async_op), async_op)
    np.testing.assert_array_equal(recv, data(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_alltoallv_moves_only_the_counted_elements(comm, dtype, async_op):
    recv = np.zeros(12, dtype)
    finish(comm.alltoallv(data(dtype), [5], recv, np.array([5]), async_op=async_op), async_op)
    np.testing.assert_array_equal(recv[:5], data(dtype)[:5])
    np.testing.assert_array_equal(recv[5:], 0)


def test_barrier(comm):
    assert comm.barrier() is None


def test_rank_and_size(comm):
    assert (comm.rank, comm.size) == (0, 1)
    assert repr(comm) == "<dtrain.Comm rank 0 of 1>"


def test_comm_options_are_passed(comm):
    with dtrain.Comm(rank=0, world_size=1, backend="auto", timeout_ms=5000) as explicit:
        assert (explicit.rank, explicit.size) == (0, 1)
    with pytest.raises(dtrain.InvalidArgumentError, match="rank = 1"):
        dtrain.Comm(rank=1, world_size=1)
    with pytest.raises(dtrain.InvalidArgumentError, match="timeout_ms"):
        dtrain.Comm(timeout_ms=-5)
    with pytest.raises(dtrain.InvalidArgumentError, match="backend"):
        dtrain.Comm(backend="carrier pigeon")


def test_buffer_protocol_objects_without_numpy(comm):
    import array
    send = array.array("d", [1.5, 2.5, 3.5])
    recv = array.array("d", [0.0] * 3)
    comm.allreduce(send, recv)
    assert recv.tolist() == [1.5, 2.5, 3.5]
    out = bytearray(4)
    comm.allgather(b"\x01\x02\x03\x04", out)
    assert out == bytearray(b"\x01\x02\x03\x04")


@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce_to_the_root(comm, dtype, async_op):
    recv = np.zeros(12, dtype)
    finish(comm.reduce(data(dtype), recv, op="max", root=0, async_op=async_op), async_op)
    np.testing.assert_array_equal(recv, data(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_gather_and_scatter(comm, dtype, async_op):
    gathered = np.zeros(12, dtype)
    finish(comm.gather(data(dtype), gathered, root=0, async_op=async_op), async_op)
    np.testing.assert_array_equal(gathered, data(dtype))
    scattered = np.zeros(12, dtype)
    finish(comm.scatter(data(dtype), scattered, root=0, async_op=async_op), async_op)
    np.testing.assert_array_equal(scattered, data(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_allgatherv_and_reduce_scatterv_move_the_counted_elements(comm, dtype, async_op):
    recv = np.zeros(12, dtype)
    finish(comm.allgatherv(data(dtype)[:5], recv, [5], async_op=async_op), async_op)
    np.testing.assert_array_equal(recv[:5], data(dtype)[:5])
    np.testing.assert_array_equal(recv[5:], 0)
    block = np.zeros(7, dtype)
    finish(comm.reduce_scatterv(data(dtype), np.array([7]), block, op="sum", async_op=async_op), async_op)
    np.testing.assert_array_equal(block, data(dtype)[:7])


def test_rooted_collectives_refuse_bad_arguments(comm):
    with pytest.raises(dtrain.InvalidArgumentError, match="root 1 is not a rank"):
        comm.gather(np.zeros(3), np.zeros(3), root=1)
    with pytest.raises(dtrain.InvalidArgumentError, match="recv_counts"):
        comm.allgatherv(np.zeros(3), np.zeros(3), [1, 2])
    with pytest.raises(dtrain.InvalidArgumentError, match="negative"):
        comm.reduce_scatterv(np.zeros(3), [-1], np.zeros(3))


def test_stats_count_finished_operations(comm):
    before = comm.stats()
    send = np.ones(10, np.float32)
    for _ in range(3):
        comm.allreduce(send, np.zeros(10, np.float32))
    comm.barrier()
    allreduce = comm.stats("allreduce")
    assert isinstance(allreduce, dtrain.OpStats)
    assert comm.stats(dtrain.OpKind.ALL).count == before.count + 4
    assert comm.stats(dtrain.OpKind.BARRIER).count >= 1
    assert allreduce.count >= 3 and allreduce.bytes >= 120 and allreduce.failed == 0
    with pytest.raises(dtrain.InvalidArgumentError):
        comm.stats("nonsense")
