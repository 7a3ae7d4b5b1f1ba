"""dtrain.DeviceArray's DLPack capsules, inspected through ctypes on any machine.

The memory is never touched (a made-up device address): what is checked is
what a consumer would read from the capsule, and that the array's owner is
held exactly as long as a capsule or a consumer's tensor needs it.
"""

import ctypes
import gc
import weakref

import pytest

import dtrain
from dtrain import _device_array

_get_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(("PyCapsule_GetName", ctypes.pythonapi))
_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))
_set_name = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(("PyCapsule_SetName", ctypes.pythonapi))
_USED = b"used_dltensor"  # the capsule keeps a pointer to its name


class Owner:
    pass


def make(owner):
    return dtrain.DeviceArray(owner, 0x7f0000001000, 3, (2, 32), (4, 5))


def test_the_capsule_describes_the_memory():
    array = make(Owner())
    assert array.__dlpack_device__() == (2, 3)
    capsule = array.__dlpack__(stream=7)
    assert _get_name(capsule) == b"dltensor"
    managed = _device_array._DLManagedTensor.from_address(_get_pointer(capsule, b"dltensor"))
    t = managed.dl_tensor
    assert t.data == 0x7f0000001000
    assert (t.device.device_type, t.device.device_id) == (2, 3)
    assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) == (2, 32, 1)
    assert [t.shape[d] for d in range(t.ndim)] == [4, 5]
    assert not t.strides  # compact
    assert t.byte_offset == 0


def test_an_unused_capsule_lets_the_owner_go():
    owner = Owner()
    alive = weakref.ref(owner)
    capsule = make(owner).__dlpack__()
    del owner
    gc.collect()
    assert alive() is not None, "the capsule must hold the owner"
    del capsule
    gc.collect()
    assert alive() is None


def test_a_consumer_holds_the_owner_until_it_calls_the_deleter():
    owner = Owner()
    alive = weakref.ref(owner)
    capsule = make(owner).__dlpack__()
    # What a consumer does: take the tensor, rename the capsule, delete later.
    managed = _device_array._DLManagedTensor.from_address(_get_pointer(capsule, b"dltensor"))
    assert _set_name(capsule, _USED) == 0
    del capsule, owner
    gc.collect()
    assert alive() is not None, "the consumer's tensor must hold the owner"
    managed.deleter(ctypes.pointer(managed))
    gc.collect()
    assert alive() is None


def test_copies_and_other_devices_are_refused():
    array = make(Owner())
    with pytest.raises(BufferError):
        array.__dlpack__(copy=True)
    with pytest.raises(BufferError):
        array.__dlpack__(dl_device=(1, 0))
    array.__dlpack__(dl_device=(2, 3), copy=False)  # this device, no copy: fine
