"""Comm and Request lifetimes: closing, splitting, and tensors kept alive."""

import gc
import sys
import weakref

import numpy as np
import pytest

import dtrain
from dlpack_objects import DLPackOnly


def test_comm_context_manager_closes(comm):
    with dtrain.Comm() as c:
        assert not c.closed
    assert c.closed
    c.close()  # twice is fine
    with pytest.raises(dtrain.InvalidUsageError, match="closed"):
        c.allreduce(np.zeros(2))
    with pytest.raises(dtrain.InvalidUsageError):
        c.rank


def test_split(comm):
    assert comm.split(None) is None
    with comm.split(7, key=3) as child:
        assert (child.rank, child.size) == (0, 1)
        recv = np.zeros(3)
        child.allreduce(np.arange(3.0), recv)
        np.testing.assert_array_equal(recv, [0, 1, 2])
    with pytest.raises(dtrain.InvalidArgumentError, match="color"):
        comm.split(-2)


def test_closing_a_parent_closes_its_children_first():
    parent = dtrain.Comm()
    child = parent.split(0)
    grandchild = child.split(0)
    parent.close()
    assert child.closed and grandchild.closed


def test_request_holds_its_tensors_until_done(comm):
    buf = np.zeros(4)
    ref = weakref.ref(buf)
    request = comm.recv(buf, 0, tag=5, async_op=True)
    del buf
    gc.collect()
    assert ref() is not None, "the pending receive lost its buffer"
    assert not request.test()
    comm.send(np.arange(4.0), 0, tag=5)
    np.testing.assert_array_equal(ref(), [0, 1, 2, 3])
    request.wait()
    gc.collect()
    assert ref() is None, "the finished request still holds its buffer"
    request.free()


def test_request_holds_dlpack_tensors_until_done(comm):
    array = np.zeros(4, np.float32)
    before = sys.getrefcount(array)
    request = comm.recv(DLPackOnly(array), 0, async_op=True)
    assert sys.getrefcount(array) > before  # numpy's DLPack export holds the array
    comm.send(np.ones(4, np.float32), 0)
    request.wait()
    assert sys.getrefcount(array) == before  # the deleter ran
    np.testing.assert_array_equal(array, 1)


def test_freeing_a_running_request_leaves_the_tensor_with_the_comm():
    comm = dtrain.Comm()
    buf = np.zeros(4)
    ref = weakref.ref(buf)
    request = comm.recv(buf, 0, async_op=True)
    del buf
    request.free()
    gc.collect()
    assert ref() is not None, "a receive still running lost its buffer"
    comm.send(np.full(4, 7.0), 0)
    np.testing.assert_array_equal(ref(), 7)
    comm.close()
    gc.collect()
    assert ref() is None


def test_freed_request_refuses_use(comm):
    request = comm.allreduce(np.ones(3), async_op=True)
    request.free()
    request.free()
    with pytest.raises(dtrain.InvalidUsageError, match="freed"):
        request.wait()
    with pytest.raises(dtrain.InvalidUsageError):
        request.test()


def test_test_reports_progress(comm):
    buf = np.zeros(2, np.int32)
    with comm.recv(buf, 0, tag=1, async_op=True) as request:
        assert request.test() is False
        comm.send(np.array([4, 5], np.int32), 0, tag=1)
        assert request.test() is True
    np.testing.assert_array_equal(buf, [4, 5])


def test_blocking_calls_release_buffers_at_once(comm):
    buf = np.zeros(5)
    before = sys.getrefcount(buf)
    comm.allreduce(buf)
    comm.broadcast(buf)
    assert sys.getrefcount(buf) == before
    buf.resize(10, refcheck=True)  # no buffer export left behind
