"""Objects that are tensors only through __dlpack__, consumed per the protocol."""

import numpy as np
import pytest

import dtrain
from conftest import DTYPES
from dlpack_objects import KDL_BFLOAT, DLPackOnly, ManualTensor, bfloat16, capsule_name


@pytest.mark.parametrize("dtype", DTYPES)
def test_dlpack_only_objects_work_as_send_and_recv(comm, dtype):
    send = np.arange(6).astype(dtype)
    recv = np.zeros(6, dtype)
    comm.allreduce(DLPackOnly(send), DLPackOnly(recv))
    np.testing.assert_array_equal(recv, send)
    assert dtrain.tensor_check(DLPackOnly(send)) == 6


def test_dlpack_only_in_place_and_async(comm):
    buf = np.arange(4, dtype=np.float32)
    request = comm.allreduce(DLPackOnly(buf), op="max", async_op=True)
    request.wait()
    request.free()
    np.testing.assert_array_equal(buf, [0, 1, 2, 3])


def test_capsule_is_renamed_and_deleter_called_once(comm):
    tensor = ManualTensor(np.arange(4, dtype=np.float32), code=2, bits=32, count=4)  # kDLFloat
    assert dtrain.tensor_check(tensor) == 4
    assert len(tensor.capsules) == 1
    assert capsule_name(tensor.capsules[0]) == "used_dltensor"
    assert tensor.deleted == 1


def test_bfloat16_through_dlpack(comm):
    values = [1.0, -2.5, 3.0, 0.15625]
    send = ManualTensor(bfloat16(values), KDL_BFLOAT, 16, 4)
    out = np.zeros(4, np.uint16)
    recv = ManualTensor(out, KDL_BFLOAT, 16, 4)
    comm.allreduce(send, recv)
    np.testing.assert_array_equal(out, bfloat16(values))
    assert (send.deleted, recv.deleted) == (1, 1)
    with pytest.raises(dtrain.InvalidArgumentError, match="bfloat16"):
        comm.allreduce(send, np.zeros(4, np.float32))
    assert send.deleted == 2  # released after the failed call, too


def test_a_used_capsule_is_refused(comm):
    tensor = ManualTensor(np.zeros(2, np.float32), code=2, bits=32, count=2)
    dtrain.tensor_check(tensor)
    used = tensor.capsules[0]

    class Replays:
        def __dlpack__(self, stream=None):
            return used

    with pytest.raises(dtrain.InvalidArgumentError, match="dltensor"):
        dtrain.tensor_check(Replays())
    assert tensor.deleted == 1


def test_a_failing_dlpack_export_is_reported(comm):
    class Broken:
        def __dlpack__(self, stream=None):
            raise RuntimeError("device lost")

    with pytest.raises(dtrain.InvalidArgumentError, match="recv: device lost"):
        comm.allreduce(np.zeros(2), Broken())


def test_numpy_byte_order_other_than_native_is_refused(comm):
    with pytest.raises(dtrain.InvalidArgumentError, match="format '>f'"):
        comm.allreduce(np.zeros(3, ">f4"), np.zeros(3, np.float32))
